"""pnnx_conformance."""
