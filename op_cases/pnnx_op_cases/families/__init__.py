"""Case families, one module per operator group; each registers with @family."""
