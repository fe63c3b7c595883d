/**
 * The process groups of the stdio children that are running, and how they are signalled. Each
 * child is spawned detached so it leads its own process group, and the whole group is signalled,
 * so helpers it spawns (`npx` → `node`, `uvx` → `python`, a `sleep`) die with it
 * (docs/decisions.md, "stdio children"). Because detached children would outlive the gateway,
 * every running group is recorded here for `killAllStdioChildren`.
 */

/** Process groups of children that are running, by their owner (one `StdioProcess` each). */
const liveGroups = new Map<object, number>();

/**
 * SIGKILLs the process group of every stdio child still running, synchronously. For
 * `process.on('exit')` and fatal-error paths, where `close()` cannot be awaited: children are
 * spawned detached (their own group), so nothing else would stop them outliving the gateway.
 * Returns how many groups were signalled.
 */
export function killAllStdioChildren(): number {
  for (const pid of liveGroups.values()) signalGroup(pid, 'SIGKILL');
  return liveGroups.size;
}

/** Records `owner`'s running group (its leader's pid) for `killAllStdioChildren`. */
export function trackGroup(owner: object, pid: number): void {
  liveGroups.set(owner, pid);
}

/** Forgets `owner`'s group; true only the first time, so the caller can count a child gone once. */
export function untrackGroup(owner: object): boolean {
  return liveGroups.delete(owner);
}

/** Signals a whole process group (the child leads its own); a gone group is not an error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // Windows has no process groups here: only the child itself can be signalled.
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
  } catch {
    // ESRCH: nothing left to signal
  }
}
