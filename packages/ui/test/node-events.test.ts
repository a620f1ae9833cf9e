// Step changes from a run's event stream, applied to the run a page loaded: a change naming a
// step the loaded run does not list means the run was read before its steps were first reported.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyNodeEvents, listsTooFewSteps } from '../src/lib/node-events.js';
import type { NodeEvent } from '../src/api/events.js';

function change(stepName: string, status: number, extra: Partial<NodeEvent> = {}): NodeEvent {
  return { type: 'dag.node.running', dagName: 'd', dagRunId: 'r1', attemptId: 'a1', stepName, handler: false, status, statusLabel: status === 1 ? 'running' : 'succeeded', startedAt: '', finishedAt: '', retryCount: 0, doneCount: 0, error: '', occurredAt: '', ...extra };
}

const node = (name: string, status = 0) => ({ step: { name }, status, statusLabel: 'not_started', startedAt: '', finishedAt: '', retryCount: 0, doneCount: 0, error: '' });

describe('node events', () => {
  test('a run loaded before its first report lists no steps: a change of its own steps asks for a reload', () => {
    assert.equal(listsTooFewSteps('r1', [], [change('first', 1)]), true);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('second', 1)]), true);
  });

  test('changes of listed steps, of handlers and of other runs do not', () => {
    assert.equal(listsTooFewSteps('r1', [node('first'), node('second')], [change('second', 1)]), false);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('onSuccess', 1, { handler: true })]), false);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('other', 1, { dagRunId: 'r2' })]), false);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('second', 1, { status: undefined })]), false);
  });

  test('listed steps take the latest change', () => {
    const nodes = applyNodeEvents('r1', [node('first'), node('second')], [change('first', 1), change('first', 4), change('second', 1)]);
    assert.deepEqual(nodes.map((n) => [n.step.name, n.status]), [['first', 4], ['second', 1]]);
  });
});
