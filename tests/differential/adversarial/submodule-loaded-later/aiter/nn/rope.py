def apply(x):
    return x
