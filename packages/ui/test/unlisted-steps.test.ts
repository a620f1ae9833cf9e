// Step changes from a run's event stream, applied to the run a page loaded: a change naming a
// step the loaded run does not list means the run was read before its steps were first reported.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { listsTooFewSteps, type StepChange } from '../src/lib/unlisted-steps.js';

function change(stepName: string, status: number | undefined, extra: Partial<StepChange> = {}): StepChange {
  return { dagRunId: 'r1', stepName, handler: false, status, ...extra };
}

const node = (name: string) => ({ step: { name } });

describe('node events', () => {
  test('a run loaded before its first report lists no steps: a change of its own steps asks for a reload', () => {
    assert.equal(listsTooFewSteps('r1', [], [change('first', 1)]), true);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('second', 1)]), true);
  });

  test('changes of listed steps, of handlers and of other runs do not', () => {
    assert.equal(listsTooFewSteps('r1', [node('first'), node('second')], [change('second', 1)]), false);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('onSuccess', 1, { handler: true })]), false);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('other', 1, { dagRunId: 'r2' })]), false);
    assert.equal(listsTooFewSteps('r1', [node('first')], [change('second', undefined)]), false);
  });
});
