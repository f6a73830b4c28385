"""Who is in a class: its code, the teacher's secret key, and each student's seat.

A code is 8 characters with no look-alikes (``stockdemo.config.CLASS_ALPHABET``),
read off a projector. Wrong codes are counted per seat and for the whole server, so
codes cannot be found by trying. The teacher's key is kept only as its SHA-256 and
compared in constant time: a copy of the store gives no keys away. A seat is a random
token for one browser tab; the results name it by its number in the class only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from stockdemo.classroom.errors import ClassRateLimited
from stockdemo.classroom.store import Store, class_key
from stockdemo.config import CLASS_ALPHABET, CLASS_CODE_LEN

TRIES_PER_SEAT = 5  # wrong codes one browser tab may try per window...
TRIES_PER_SERVER = 300  # ...and all of them together: a new tab per try gains nothing
TRIES_WINDOW_S = 60


def new_code() -> str:
    """A random class code (the caller checks it is free)."""
    return "".join(secrets.choice(CLASS_ALPHABET) for _ in range(CLASS_CODE_LEN))


def new_key() -> str:
    """The teacher's secret key: it steers the class, and never goes into a student's link."""
    return secrets.token_urlsafe(24)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def holds_key(key_hash: str, key: object) -> bool:
    """Whether ``key`` is the one whose digest the class keeps, compared in constant time."""
    given = digest(key if isinstance(key, str) and len(key) <= 128 else "")
    return hmac.compare_digest(key_hash.encode(), given.encode())


def new_seat() -> str:
    """A student's random seat token: identifies one browser tab, says nothing about who."""
    return secrets.token_urlsafe(16)


def _buckets(seat: str) -> tuple[tuple[str, int], ...]:
    return (f"sd:tries:{seat}", TRIES_PER_SEAT), ("sd:tries:all", TRIES_PER_SERVER)


def refuse_guessing(db: Store, seat: str) -> None:
    """Raise ClassRateLimited while this seat (or the server) has used up its wrong codes."""
    buckets = _buckets(seat)
    pipe = db.pipeline()
    for name, _ in buckets:
        pipe.get(name)
    for (name, limit), count in zip(buckets, pipe.execute(), strict=True):
        if int(count or 0) >= limit:
            wait = max(1, int(db.ttl(name)))
            raise ClassRateLimited(f"Too many wrong codes: wait {wait} s and try again.")


def count_wrong_code(db: Store, seat: str) -> None:
    """One more wrong code for this seat and the server, each counted over TRIES_WINDOW_S."""
    pipe = db.pipeline()
    for name, _ in _buckets(seat):
        pipe.incr(name)
        pipe.expire(name, TRIES_WINDOW_S, nx=True)
    pipe.execute()


def seat_number(db: Store, code: str, seat: str) -> int:
    """This seat's number in the class: 1 for the first to join, and so on. Kept for good."""
    main = class_key(code)
    number = db.hget(f"{main}:seats", seat)
    if number is None:
        candidate = db.hincrby(main, "seats", 1)
        db.hsetnx(f"{main}:seats", seat, candidate)
        number = db.hget(f"{main}:seats", seat)  # another replica may have won
    return int(number or 0)
