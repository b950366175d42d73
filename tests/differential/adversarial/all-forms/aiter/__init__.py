from .a import *
from .b import *
from .c import *
from .d import *
