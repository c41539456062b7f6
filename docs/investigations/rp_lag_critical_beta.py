import re, sys, collections
for f in sys.argv[1:]:
    rows = collections.defaultdict(list)
    for line in open(f):
        m = re.match(r"H=(\S+) (r_[hp]) β=(\S+) .*\| slope (.*)", line)
        if not m: continue
        pairs = re.findall(r"(\d+->\d+): ([+-]\S+)±(\S+)", m.group(4))
        for lab, s, e in pairs:
            rows[(m.group(1), m.group(2), lab)].append((float(m.group(3)), float(s), float(e)))
    for k, v in sorted(rows.items()):
        bc = None
        for (b0, s0, e0), (b1, s1, e1) in zip(v, v[1:]):
            if s0 > 0 >= s1:
                bc = b0 + (b1 - b0) * s0 / (s0 - s1); g = (s1 - s0) / (b1 - b0); err = max(e0, e1) / abs(g); break
        print(f, *k, f"β_c={bc:.3f}±{err:.3f} (ds/dβ={g:.2f})" if bc else "none")
