def tool(a):
    return a
