"""Readers and writers for the files PNNX exchanges: pnnx.param, pnnx.bin,
ncnn.param and ncnn.bin. Every problem in an input file raises `FormatError`."""
