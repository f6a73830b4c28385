# Tries: to print one 50 MB string.
# Must: end at the printed-text limit.
# expect: limit:output_kb printed text
print("x" * 50_000_000)
