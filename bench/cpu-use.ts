/**
 * Where a run's CPU went, read from Linux's /proc: how busy the machine was, and for each process watched its CPU
 * seconds, its main thread's, and its busiest other threads' (a worker's vision thread, its layout thread,
 * onnxruntime's and libuv's). Elsewhere than Linux every figure is null.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks a second: 100 on every Linux this runs on (USER_HZ). */
const TICKS = 100;

interface Snapshot {
  busy: number;
  total: number;
  threads: Map<number, Map<number, number>>;
}

export interface ProcessCpu {
  seconds: number;
  mainThread: number;
  /** The busiest other threads' CPU seconds, most first. */
  otherThreads: number[];
}

export interface CpuUse {
  /** The share of all cores' time spent busy over the run. */
  machineBusy: number | null;
  processes: Record<string, ProcessCpu | null>;
}

function threadTicks(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      // utime and stime are fields 14 and 15; the command name before them may hold spaces, so count after its ')'.
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), Number(f[11]) + Number(f[12]));
    }
  } catch {
    // gone, or not Linux
  }
  return out;
}

export function cpuSnapshot(pids: readonly number[]): Snapshot | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = cpu[3] + (cpu[4] ?? 0);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - idle, total, threads: new Map(pids.map((p) => [p, threadTicks(p)])) };
  } catch {
    return null;
  }
}

/** What happened between two snapshots, the processes named by pid (`names`: label -> pid). */
export function cpuUse(a: Snapshot | null, b: Snapshot | null, names: Record<string, number>): CpuUse {
  if (!a || !b) return { machineBusy: null, processes: Object.fromEntries(Object.keys(names).map((k) => [k, null])) };
  const processes: Record<string, ProcessCpu | null> = {};
  for (const [name, pid] of Object.entries(names)) {
    const before = a.threads.get(pid);
    const after = b.threads.get(pid);
    if (!before || !after || !after.size) {
      processes[name] = null;
      continue;
    }
    const used = [...after].map(([tid, t]) => ({ tid, s: (t - (before.get(tid) ?? 0)) / TICKS }));
    processes[name] = {
      seconds: used.reduce((x, u) => x + u.s, 0),
      mainThread: used.find((u) => u.tid === pid)?.s ?? 0,
      otherThreads: used
        .filter((u) => u.tid !== pid)
        .map((u) => u.s)
        .sort((x, y) => y - x)
        .slice(0, 4),
    };
  }
  return { machineBusy: (b.busy - a.busy) / Math.max(1, b.total - a.total), processes };
}
