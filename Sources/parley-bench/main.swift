print("parley-bench: not built yet")
