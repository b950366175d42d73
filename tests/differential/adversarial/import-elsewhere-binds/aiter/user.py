from .helpers import tool
