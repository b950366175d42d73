def attend(q):
    return q
