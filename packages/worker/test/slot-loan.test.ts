import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import type { NodeSnapshot, RunSnapshot } from '@trellis/engine';
import { SlotLoan } from '../src/tasks/slot-loan.js';

function node(name: string, run: string, status: NodeStatus): NodeSnapshot {
  return { step: { name, run } as NodeSnapshot['step'], stdout: '', stderr: '', startedAt: '', finishedAt: '', status, statusLabel: '', retryCount: 0, doneCount: 0, subRuns: [], subRunsRepeated: [], error: '' };
}

function snapshot(...nodes: NodeSnapshot[]): RunSnapshot {
  return { dagName: 'p', dagRunId: 'r', attemptId: 'a', rootDagRunName: 'p', rootDagRunId: 'r', parentDagRunName: '', parentDagRunId: '', status: RunStatus.Running, statusLabel: '', startedAt: '', finishedAt: '', log: '', params: '[]', error: '', nodes, handlers: {}, waitingSteps: [] };
}

/** Counts loans: how many are out now, and how many were ever made. */
function lender() {
  const state = { out: 0, made: 0 };
  const lend = () => {
    state.out += 1;
    state.made += 1;
    return () => {
      state.out -= 1;
    };
  };
  return { state, lend };
}

describe('slot loan of a parent run', () => {
  test('lent while the parent only waits for children; one loan however many children; back when the waits end', () => {
    const { state, lend } = lender();
    const loan = new SlotLoan(lend);
    loan.observe(snapshot(node('child', 'kid', NodeStatus.Running)));
    loan.waitBegins();
    loan.waitBegins();
    assert.deepEqual(state, { out: 1, made: 1 });
    loan.waitEnds();
    assert.equal(state.out, 1);
    loan.waitEnds();
    assert.deepEqual(state, { out: 0, made: 1 });
  });

  test('not lent while a step of its own runs alongside the wait; lent once that step ends', () => {
    const { state, lend } = lender();
    const loan = new SlotLoan(lend);
    loan.observe(snapshot(node('child', 'kid', NodeStatus.Running), node('build', '', NodeStatus.Running)));
    loan.waitBegins();
    assert.equal(state.made, 0, 'the slot is in use by the build step');
    loan.observe(snapshot(node('child', 'kid', NodeStatus.Running), node('build', '', NodeStatus.Success)));
    assert.equal(state.out, 1);
    loan.observe(snapshot(node('child', 'kid', NodeStatus.Running), node('build', '', NodeStatus.Success), node('test', '', NodeStatus.Running)));
    assert.equal(state.out, 0, 'a step that starts during the loan takes the slot back');
    loan.waitEnds();
    assert.deepEqual(state, { out: 0, made: 1 });
  });
});
