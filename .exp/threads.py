import subprocess, sys, time, os
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
last = {}
tick = os.sysconf('SC_CLK_TCK')
while p.poll() is None:
    try:
        for tid in os.listdir(f'/proc/{p.pid}/task'):
            try:
                s = open(f'/proc/{p.pid}/task/{tid}/stat').read()
                comm = s[s.index('(')+1:s.rindex(')')]
                f = s[s.rindex(')')+2:].split()
                last[tid] = (comm, (int(f[11]) + int(f[12])) / tick)
            except Exception: pass
    except Exception: pass
    time.sleep(0.05)
agg = {}
for tid, (comm, t) in sorted(last.items(), key=lambda x: int(x[0])):
    print(tid, comm, round(t, 2))
    agg[comm] = agg.get(comm, 0) + t
print(agg, 'total', round(sum(agg.values()), 2))
