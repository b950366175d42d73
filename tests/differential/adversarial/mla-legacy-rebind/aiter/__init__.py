from .mla import *
