"""pnnx_reference."""
