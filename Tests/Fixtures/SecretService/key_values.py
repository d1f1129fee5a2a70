"""KEY=VALUE command-line arguments, as the Secret Service fixtures take attributes."""


def key_values(arguments):
    """{KEY: VALUE} of arguments of the form KEY=VALUE (VALUE may hold more "=")."""
    result = {}
    for pair in arguments:
        key, separator, value = pair.partition("=")
        if not separator:
            raise SystemExit(f"not KEY=VALUE: {pair!r}")
        result[key] = value
    return result
