def helpers(x):
    return x


from . import user
