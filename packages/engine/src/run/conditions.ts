import { execFile } from 'node:child_process';
import type { Precondition } from '@trellis/core';

export interface ConditionContext {
  env: Record<string, string>;
  cwd: string;
  expand(text: string): string;
  /** Expansion for text a shell parses: references become variables added to `bound`. */
  expandForShell(text: string, bound: Record<string, string>): string;
}

/** How long a condition command may take before it counts as not met. */
const CONDITION_TIMEOUT_MS = 60_000;

export function matchesExpected(value: string, expected: string): boolean {
  if (!expected.startsWith('re:')) return value === expected;
  try {
    return new RegExp(expected.slice(3)).test(value);
  } catch {
    return false;
  }
}

/** Runs a condition's text with sh; its references reach the shell as variables, never as code. */
function shellOutput(text: string, ctx: ConditionContext, wrap: (script: string) => string = (script) => script): Promise<{ code: number; stdout: string }> {
  const bound: Record<string, string> = {};
  const script = wrap(ctx.expandForShell(text, bound));
  return new Promise((resolve) => {
    execFile('sh', ['-c', script], { env: { ...ctx.env, ...bound }, cwd: ctx.cwd, timeout: CONDITION_TIMEOUT_MS, killSignal: 'SIGKILL' }, (error, stdout) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout: String(stdout) });
    });
  });
}

/** A condition's value: literal text, or what the shell makes of it when it uses `$`, backticks or `$(...)`. */
export async function conditionValue(condition: string, ctx: ConditionContext): Promise<string> {
  const text = ctx.expand(condition);
  if (!/[`$]/.test(text)) return text.trim();
  const printed = (script: string): string => `printf '%s' "${script.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return (await shellOutput(condition, ctx, printed)).stdout.trim();
}

/** Runs a condition as a command: met when it exits 0. */
export async function conditionSucceeds(condition: string, ctx: ConditionContext): Promise<boolean> {
  return (await shellOutput(condition, ctx)).code === 0;
}

export interface ConditionOutcome {
  met: boolean;
  /** Why it was not met, for the node's error and the run log. */
  reason: string;
}

export async function evaluatePrecondition(p: Precondition, ctx: ConditionContext): Promise<ConditionOutcome> {
  let met: boolean;
  let seen: string;
  if (p.expected !== undefined) {
    const value = await conditionValue(p.condition, ctx);
    const expected = ctx.expand(p.expected);
    met = matchesExpected(value, expected);
    seen = `"${p.condition}" was "${value}", expected ${p.negate ? 'not ' : ''}"${expected}"`;
  } else {
    met = await conditionSucceeds(p.condition, ctx);
    seen = `"${p.condition}" ${met ? 'succeeded' : 'failed'}${p.negate ? ' (negated)' : ''}`;
  }
  if (p.negate) met = !met;
  return { met, reason: p.error ?? `precondition not met: ${seen}` };
}

export async function evaluateAll(list: Precondition[], ctx: ConditionContext): Promise<ConditionOutcome> {
  for (const p of list) {
    const outcome = await evaluatePrecondition(p, ctx);
    if (!outcome.met) return outcome;
  }
  return { met: true, reason: '' };
}
