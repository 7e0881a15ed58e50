"""pnnx_op_cases."""
