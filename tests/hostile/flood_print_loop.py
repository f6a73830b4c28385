# Tries: to print forever.
# Must: end at the printed-text limit, with what it printed first kept.
# expect: limit:output_kb printed text
while True:
    print("spam " * 20)
