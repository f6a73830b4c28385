# Tries: to lift its own CPU and memory limits.
# Must: be refused (Python says "not allowed to raise maximum limit" for the EPERM).
# expect: error change its own limits
import resource

resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
