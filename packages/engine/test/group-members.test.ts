import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { groupHasLiveMember } from '../src/executors/group-members.js';

function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('process group members (Linux /proc)', () => {
  test('a group of zombies has no live member; a group with a running process has one', async () => {
    // The background `sleep 0` makes itself a group leader (setsid) and exits; its parent then
    // becomes `sleep 30`, which never waits for it: a group holding only an unreaped zombie,
    // as a step's killed orphans are until a slow PID 1 reaps them.
    const parent = spawn('sh', ['-c', 'setsid sleep 0 & echo $!; exec sleep 30'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const [line] = (await once(parent.stdout, 'data')) as [Buffer];
      const zombie = Number(line.toString().trim());
      await until('the background process to be a zombie', () => stateOf(zombie) === 'Z');
      assert.doesNotThrow(() => process.kill(-zombie, 0), 'the zombie-only group still exists for kill(0)');
      assert.equal(await groupHasLiveMember(zombie), false);
      assert.equal(await groupHasLiveMember(parent.pid ?? 0), true);
    } finally {
      process.kill(-(parent.pid ?? 0), 'SIGKILL');
    }
    await once(parent, 'close');
    assert.equal(await groupHasLiveMember(parent.pid ?? 0), false);
  });
});
