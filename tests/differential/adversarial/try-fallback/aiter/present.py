def present_op(a, scale):
    return a
