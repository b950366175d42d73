def helper(a):
    return a


from . import rope


def rope(x):
    return x


def norm(x, eps):
    return x
