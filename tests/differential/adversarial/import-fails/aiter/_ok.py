import json
import extlib


def plain(a, scale):
    return a


def helper(a, b):
    return a
