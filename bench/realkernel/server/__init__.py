"""scripts/test-real-server's parts: the image (PipeWire in the guest) and the phases' checks."""
