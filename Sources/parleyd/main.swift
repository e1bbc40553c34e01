print("parleyd: not built yet")
