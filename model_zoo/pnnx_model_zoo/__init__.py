"""pnnx_model_zoo."""
