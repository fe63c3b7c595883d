/**
 * Linux `/proc` readings the bench needs: a process's memory (VmRSS, VmHWM), its descendants
 * (so children a proxy spawned can be reaped by pid), and the TCP addresses it listens on (so a
 * proxy that bound anything but loopback is caught and stopped at once).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** A process identity that survives pid reuse: the pid plus its kernel start time. */
export interface ProcessId {
  pid: number;
  startTime: string;
}

/** Resident set size now and at its peak (kB → bytes); undefined when the process is gone. */
export function memoryOf(pid: number): { rss: number; peakRss: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match === null ? 0 : Number(match[1]) * 1024;
  };
  return { rss: kb('VmRSS'), peakRss: kb('VmHWM') };
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: split after its last ")".
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The identity of a live process, or undefined when it is gone. */
export function identify(pid: number): ProcessId | undefined {
  const fields = statFields(pid);
  // After the name: state(0) ppid(1) … starttime is field 22 overall, index 19 here.
  return fields === undefined || fields[19] === undefined ? undefined : { pid, startTime: fields[19] };
}

/** True when the same process (same pid, same start time) is still running and not a zombie. */
export function stillRunning(id: ProcessId): boolean {
  const fields = statFields(id.pid);
  return fields !== undefined && fields[19] === id.startTime && fields[0] !== 'Z';
}

/** Children of every process, by parent pid: one scan of /proc. */
export function processTree(): Map<number, number[]> {
  const childrenOf = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields === undefined || fields[1] === undefined) continue;
    const ppid = Number(fields[1]);
    const list = childrenOf.get(ppid) ?? [];
    list.push(Number(entry));
    childrenOf.set(ppid, list);
  }
  return childrenOf;
}

/** Every live descendant of `root` (children, grandchildren, …), deepest last. */
export function descendantsOf(root: number, tree: Map<number, number[]> = processTree()): ProcessId[] {
  const found: ProcessId[] = [];
  const queue = [...(tree.get(root) ?? [])];
  while (queue.length > 0 && found.length < 10_000) {
    const pid = queue.shift()!;
    const id = identify(pid);
    if (id !== undefined) found.push(id);
    queue.push(...(tree.get(pid) ?? []));
  }
  return found;
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match !== null) inodes.add(match[1]!);
    } catch {
      // The descriptor closed while we looked.
    }
  }
  return inodes;
}

/** Hex address from /proc/net/tcp{,6} to text; only what a loopback check needs. */
function decodeAddress(hex: string, v6: boolean): string {
  if (!v6) {
    const bytes = hex.match(/../g)!.map((b) => parseInt(b, 16)).reverse();
    return bytes.join('.');
  }
  if (hex === '00000000000000000000000000000000') return '::';
  if (hex === '00000000000000000000000001000000') return '::1';
  if (hex.startsWith('0000000000000000FFFF0000')) return `::ffff:${decodeAddress(hex.slice(24), false)}`;
  return hex;
}

/** TCP addresses (`host:port`) on which `pid` has a listening socket. */
export function listeningAddresses(pid: number): string[] {
  const inodes = socketInodes(pid);
  const out: string[] = [];
  for (const [file, v6] of [['/proc/net/tcp', false], ['/proc/net/tcp6', true]] as const) {
    let table: string;
    try {
      table = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address(1) … st(3) … inode(9); state 0A is LISTEN.
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9]!)) continue;
      const [addr, port] = cols[1]!.split(':') as [string, string];
      out.push(`${decodeAddress(addr, v6)}:${parseInt(port, 16)}`);
    }
  }
  return out;
}

/** True when every address is IPv4 127.0.0.0/8 or IPv6 ::1 (or their mapped form). */
export function allLoopback(addresses: readonly string[]): boolean {
  return addresses.every((a) => /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+):\d+$/.test(a));
}
