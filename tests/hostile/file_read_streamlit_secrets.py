# Tries: to read the app's secrets (.streamlit/secrets.toml), then its settings beside them.
# Must: be refused: no file of the app's can be read, whether it exists or not.
# expect: refused no files but its own
for name in ("secrets.toml", "config.toml"):
    try:
        print(open("__REPO__/.streamlit/" + name).read()[:200])
    except FileNotFoundError:
        pass
print(open("__REPO__/.streamlit/secrets.toml").read())
