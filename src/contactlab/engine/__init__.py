"""The engine: the contact table, the generated step kernels, the stepper that runs them."""
