from .loaded import Y
