"""Stage 6: the generated module, from templates, unparsed and formatted."""
