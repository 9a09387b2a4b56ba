"""How plugins are named, found and configured: entry-point registries, import strings and
spec strings."""
