# Tries: to wait forever in select() with nothing to wait for.
# Must: end at the wall-clock limit.
# expect: limit:wall_s wall-clock time
import select

select.select([], [], [])
