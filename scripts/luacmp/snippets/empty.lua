-- Nothing: the interpreter's own start-up time and memory.
print("ok")
