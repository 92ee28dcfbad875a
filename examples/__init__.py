"""Single-example programs batched by autobatch; their output is in generated/examples/."""
