"""Command groups of `nowlab`, each with a `register(app)`; heavy imports stay inside the commands."""
