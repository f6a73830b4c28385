"""Uploads that must be refused, each with the words its refusal must hold (a regular expression):
read by the prices' reader (tests/test_data.py) and through the Train page (test_page_train.py)."""

BAD_FILES = {
    "empty": (b"", "empty"),
    "blank lines only": (b"\n\n  \n", "empty"),
    "byte order mark only": (b"\xef\xbb\xbf\n", "no text"),
    "header only": (b"Date,Close\n", "header .* but no rows"),
    "no numeric column": (b"Date,Name\n2020-01-02,abc\n2020-01-03,def\n", "No numeric column"),
    "no date column": (b"Close\n1\n2\n3\n", "No date column"),
    "nan": (b"Date,Close\n2020-01-02,1\n2020-01-03,NaN\n2020-01-06,3\n", "Row 2, column Close"),
    "infinity": (b"Date,Close\n2020-01-02,1\n2020-01-03,2\n2020-01-06,inf\n", "not a finite number"),
    "gap": (b"Date,Close\n2020-01-02,1\n2020-01-03,\n2020-01-06,3\n", "an empty cell"),
    "dates out of order": (b"Date,Close\n2020-01-03,1\n2020-01-02,2\n", "oldest first"),
    "dates duplicated": (b"Date,Close\n2020-01-02,1\n2020-01-02,2\n2020-01-03,2\n", "more than once"),
    "a bad date": (b"Date,Close\n" + b"".join(b"2020-01-%02d,1\n" % d for d in range(1, 21))
                   + b"yesterday,2\n", "Row 21: 'yesterday'"),
    "ragged rows": (b"Date,Close\n2020-01-02,1\n2020-01-03,2,3,4\n", "could not be read as CSV"),
    "not utf-8": ("Date,Close,Café\n2020-01-02,1,x\n".encode("latin-1"), "not UTF-8"),
    "utf-16": ("Date,Close\n2020-01-02,1\n".encode("utf-16"), "UTF-16"),
    "binary": (bytes(range(256)) * 8, "binary"),
    "xlsx": (b"PK\x03\x04" + b"\x00" * 100, "Excel"),
    "over the limit": (b"Date,Close\n" + b"2020-01-02,1\n" * 420_000, "limit is 5 MB"),
}
