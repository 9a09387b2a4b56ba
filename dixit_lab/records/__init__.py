"""The one record format both engines write, its files (plain or zstd), many records as
columns, and the checks that keep them whole."""
