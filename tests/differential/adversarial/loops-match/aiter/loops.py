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
