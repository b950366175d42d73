def _setup():
    global late_def, late_lambda
    def late_def(a, causal=False):
        return a
    late_lambda = lambda a, b: a


def _never_run():
    global never_bound
    def never_bound(a):
        return a


_setup()
