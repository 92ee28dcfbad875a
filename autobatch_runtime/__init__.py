"""What generated modules run on, importable without the compiler."""
