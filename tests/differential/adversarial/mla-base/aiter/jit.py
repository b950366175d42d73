def compile_ops(name):
    def deco(fn):
        return fn
    return deco
