# Tries: endless recursion.
# Must: end at Python's recursion limit, on the line of the recursive call.
# expect: limit:recursion recursion limit
def down(n):
    return down(n + 1)


down(0)
