export * from './db/types.js';
export { openDatabase, type OpenDatabaseOptions } from './db/open.js';
export { DataDirInUseError } from './db/data-dir-in-use.js';
export { isConnectionError, isTransient, withTransientRetry } from './db/transient.js';
export { migrate, MigrationError, MIGRATIONS } from './migrations/index.js';
export * from './runs/record.js';
export { insertRun, specHash, RunExistsError, StaleDefinitionsError, type DefinitionVersions, type NewRun } from './runs/insert-run.js';
export { saveSecretParams, getSecretParams, secretParamsSealedWith, resealSecretParams, secretParamsCountsByKey, type SecretParams, type StoredSecretParams } from './runs/secret-params.js';
export { recordProfileEntries } from './runs/profile-entries.js';
export { getRun, getLatestRun, getDagRunStates, countActiveRuns, getSpecYaml, type DagRunState } from './runs/get-run.js';
export { listRuns, listRunSummaries, listRunSummaryJson, InvalidCursorError, type RunFilter } from './runs/list-runs.js';
export { RunSummaryCache } from './runs/summary-cache.js';
export { updateRunStatus, writeSnapshot, getNodes, setNodeData, saveOutputs, saveAttemptOutputs, getOutputs, markStarted, type StatusChange, type SnapshotWrite, type NodeRow } from './runs/update-run.js';
export { failInterruptedRuns, purgeHistory, effectiveRetentionDays } from './runs/recovery.js';
export { setSuspended, suspendedAmong, dagsWithRunsBefore } from './runs/dag-state.js';
export { admitQueuedRuns, hasQueuedRuns, queueCounts, dequeueRun, requeueForRetry, type Admission, type AdmissionRequest, type RetryAttempt, type AdmissionTarget } from './runs/admission.js';
export { upsertWorker, recordHeartbeat, listWorkers, pruneWorkers, countLiveCoordinators, type WorkerRecord, type WorkerRegistration, type RunningTaskRow } from './dispatch/workers.js';
export { ackRun, requeueUnacked, failRunsOfLostWorkers, cancellationsFor, attemptsAssignedTo, requestRemoteStop, advanceReportSeq, releaseLease, type AttemptRef } from './dispatch/leases.js';
export { reconcileHeldAttempts, type HeldReconciliation } from './dispatch/reconcile.js';
export { queueItems } from './runs/queue-items.js';
export { notifyDispatch, DISPATCH_CHANNEL } from './dispatch/notify.js';
export { acquireSchedulerLease, holdsSchedulerLease, releaseSchedulerLease } from './scheduler/lease.js';
export {
  getSchedulerState, lockSchedulerState, setLastTick, setSchedulerPaused, consumeOneOff, consumedOneOffs, succeededSince, abortQueuedScheduledRuns, activeRunsOf,
  type SchedulerState,
} from './scheduler/state.js';
export { queueStats, finishedRunsByStatus, type QueueStats } from './runs/run-stats.js';
export { recordEvent, listEvents, eventsAfter, lastEventId, type EventRecord, type EventFilter, type NewEvent } from './events/event-log.js';
export { queueRunCommand, takeRunCommands, type RunCommand } from './dispatch/run-commands.js';
export { NameTakenError } from './auth/unique.js';
export {
  insertApiKey, listApiKeys, getApiKey, listApiKeyCredentials, updateApiKey, deleteApiKey, touchApiKeys,
  type ApiKeyRecord, type ApiKeyCredential, type NewApiKey, type ApiKeyChange,
} from './auth/api-keys.js';
export {
  insertWebhook, listWebhooks, getWebhook, getWebhookCredential, replaceWebhookToken, setWebhookEnabled, setWebhookProfileAllowlist, deleteWebhook, touchWebhook,
  type WebhookRecord, type WebhookCredential, type NewWebhook,
} from './auth/webhooks.js';
export { anyUserExists, insertUser, insertFirstUser, insertOidcUser, getUserById, getUserByUsername, getUserByOidcIdentity, listUsers, updateUser, setUserPassword, deleteUser, UsernameTakenError, type UserRecord, type NewUser, type UserChange } from './auth/users.js';
export { sharedSecret } from './auth/secrets.js';
export { loginBlockedFor, recordLoginFailure, clearLoginFailures, type ThrottleKey, type ThrottlePolicy } from './auth/login-failures.js';
export { insertWorkspace, listWorkspaces, getWorkspace, getWorkspaceByName, updateWorkspace, deleteWorkspace, type WorkspaceRecord, type WorkspaceChange } from './profiles/workspaces.js';
export {
  insertProfile, listProfiles, profilesVersion, getLayer, ensureDefaultsLayer, updateProfile, deleteProfile, listEntries, getEntry, putVariable, putSecret, deleteEntry,
  type ProfileRecord, type ProfileEntryRecord, type ProfileChange, type LayerRef, type LayerScope, type SealedSecret,
} from './profiles/profiles.js';
export { getSealedSecrets, secretsSealedWith, resealSecret, secretCountsByKey, type StoredSecret } from './profiles/sealed-secrets.js';
export { appendOwnLogChunks, type OwnLogStreams, type OwnReportResult } from './logs/append-own-log-chunks.js';
export { appendLogChunks, type NewLogChunk, type RefusedLogChunk, type AppendResult } from './logs/append-log-chunks.js';
export { RUN_LOG_CHANNEL, MAX_LOG_PIECE, type LogStreamInfo, type LogStreamRef } from './logs/log-stream.js';
export { logTail, logLineStart, logBytes } from './logs/read-log.js';
export { storedLogSize } from './logs/stored-log-size.js';
export {
  createStoredFile, updateStoredFile, putStoredFile, putStoredFiles, swapStoredFiles, deleteStoredFile, renameStoredFile, storedFilesSince, storedFilesVersion, storedVersions, contentHash,
  type StoredFile, type StoredFileWriter, type RenameOutcome, type StoredFileSwap, type StoredFileSwapOutcome,
} from './files/stored-files.js';
export { listenStoredFiles, STORED_FILES_CHANNEL, type StoredFileKind } from './files/stored-file-notify.js';
export { getSyncConfig, putSyncConfig, resealSyncToken, recordSyncedCommit, listSyncItems, putSyncItems, deleteSyncItem, deleteSyncItems, withSyncLock, recordSyncedSpecs, syncedSpecCommit, type SyncConfigRecord, type SyncItemRecord } from './sync/sync-state.js';
