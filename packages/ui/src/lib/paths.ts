/** A run's page in the app. */
export function runPath(name: string, dagRunId: string): string {
  return `/runs/${encodeURIComponent(name)}/${encodeURIComponent(dagRunId)}`;
}
