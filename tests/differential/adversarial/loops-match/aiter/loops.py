for _ in range(0):
    def in_empty_loop(a):
        return a

for _ in range(2):
    def in_loop(a, b=None):
        return a

while False:
    def in_while(a):
        return a

for picked in (0, lambda q, causal=False: q):
    pass

match 2:
    case 1:
        def by_match(a, causal=False):
            return a
    case 2:
        def by_match(a):
            return a

for _ in (1,):
    def once(a, causal=False):
        return a

for _ in [1]:
    if _:
        break
    def maybe_broken(a, causal=False):
        return a
else:
    def after_break(a, causal=False):
        return a

while 0:
    pass
else:
    def loop_else(a, causal=False):
        return a

for last in (once, in_loop):
    pass

match "linux":
    case "darwin" | "win32": inline_case = once
    case "linux": inline_case = in_loop
