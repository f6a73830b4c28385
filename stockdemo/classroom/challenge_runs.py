"""A challenge as the class runs it: asked by the teacher, each seat's latest run kept, the
runs grouped into the gallery, one shown to the class without its seat.

What is kept and how it is grouped is in stockdemo/classroom/gallery.py. Nothing on a
student's side returns another seat's run, except the one the teacher shows, without its
seat.
"""

from __future__ import annotations

from stockdemo.classroom.codes import seat_number
from stockdemo.classroom.errors import ClassError
from stockdemo.classroom.gallery import (
    MAX_CODE,
    MAX_KEY,
    MAX_TEXT,
    Asked,
    ChallengeRow,
    Failure,
    Gallery,
    Submission,
    challenge_rows,
    gallery,
)
from stockdemo.classroom.room import Room
from stockdemo.classroom.state import Teacher
from stockdemo.classroom.store import MAX_CHALLENGES, class_key, reachable
from stockdemo.config import parse_seat
from stockdemo.i18n import N_, Message, later_n
from stockdemo.i18n.stored import bounded


class ChallengeRuns(Room):
    """The class's challenges: the teacher asks, closes, reads the gallery and shows a run;
    students read the open one, send their runs and read their own."""

    # -- the teacher ----------------------------------------------------------

    def ask(self, teacher: Teacher, challenge_id: str, title: str, prompt: str, start: str) -> int:
        """Ask the class a challenge (a ready-made edit's id, or "prompt"), starting from the
        code ``start`` -> its number. Students' runs for it are taken until the next one."""
        self._authorise(teacher)
        main = class_key(teacher.code)
        with reachable():
            number = int(self.db.hlen(f"{main}:challenges")) + 1
        if number > MAX_CHALLENGES:
            raise ClassError(later_n("A class asks at most {n} challenge: start a new class.",
                                     "A class asks at most {n} challenges: start a new class.",
                                     MAX_CHALLENGES))
        if not isinstance(start, str) or len(start) > MAX_CODE:
            raise ClassError(N_("The starting code is too long."))
        asked = Asked(number, str(challenge_id)[:MAX_KEY], str(title)[:MAX_KEY],
                          str(prompt)[:MAX_TEXT], start, self.clock())
        self._update(teacher, {"challenge": number, "shown": 0},
                     extra=[(f"{main}:challenges", str(number), asked.to_json())])
        return number

    def close_challenge(self, teacher: Teacher) -> int:
        """No challenge open: students' editors follow the teacher again. Runs are kept."""
        return self._update(teacher, {"challenge": 0, "shown": 0})

    def gallery(self, teacher: Teacher, number: int | None = None) -> Gallery | None:
        """Challenge ``number``'s runs (the open one by default), grouped, with who has not
        run yet, in one round trip; None when no challenge has been asked."""
        fields = self._authorise(teacher)
        number = number or int(fields.get("challenge") or 0)
        if not number:
            return None
        main = class_key(teacher.code)
        with reachable():
            pipe = self.db.pipeline(transaction=False)
            pipe.hget(f"{main}:challenges", str(number))
            pipe.hgetall(f"{main}:runs:{number}")
            pipe.hgetall(f"{main}:seats")
            pipe.zrangebyscore(f"{main}:seen", self.clock() - self.presence_s, "+inf")
            asked, runs, seats, connected = pipe.execute()
        if asked is None:
            return None
        submissions = [s for seat, text in runs.items()
                       if (s := Submission.from_json(text, int(seats.get(seat) or 0))) is not None]
        return gallery(Asked.from_json(asked), submissions,
                       [int(seats[s]) for s in connected if s in seats])

    def show(self, teacher: Teacher, shape: str | None) -> int:
        """Show the class the first run of the open challenge's tile ``shape`` (its
        ``Group.key``, or a shape key), without its seat; None hides it. -> the class's new
        version."""
        fields = self._authorise(teacher)
        main = class_key(teacher.code)
        if shape is None:
            return self._update(teacher, {"shown": 0})
        found = self.gallery(teacher)
        group = None if found is None else found.group(shape)
        if group is None:
            raise ClassError(N_("No run of the open challenge has that graph."))
        return self._update(teacher, {"shown": int(fields.get("shown") or 0) + 1},
                            extra=[(f"{main}:shown", "run", group.runs[0].anonymous().to_json())])

    def challenge_results(self, teacher: Teacher) -> list[ChallengeRow]:
        """Every seat's final run of every challenge asked, by challenge and seat."""
        self._authorise(teacher)
        main = class_key(teacher.code)
        with reachable():
            asked = self.db.hgetall(f"{main}:challenges")
            pipe = self.db.pipeline(transaction=False)
            pipe.hgetall(f"{main}:seats")
            for number in asked:
                pipe.hgetall(f"{main}:runs:{number}")
            seats, *runs = pipe.execute()
        challenges = {int(n): Asked.from_json(text) for n, text in asked.items()}
        return challenge_rows(challenges, {
            int(n): [s for seat, text in given.items()
                     if (s := Submission.from_json(text, int(seats.get(seat) or 0))) is not None]
            for n, given in zip(asked, runs, strict=True)})

    # -- students -------------------------------------------------------------

    def open_challenge(self, code: str) -> Asked | None:
        """The challenge open in the class (its prompt and starting code), if any."""
        with reachable():
            number = self.db.hget(class_key(code), "challenge")
            if not number or number == "0":
                return None
            text = self.db.hget(f"{class_key(code)}:challenges", number)
        return None if text is None else Asked.from_json(text)

    def submit(self, code: str, seat: object, source: object, passes: bool, sentence: Message | str,
               shape: str, error: Failure | None, reason: Message | str = "") -> Submission:
        """A student's run for the open challenge (its verdict, the reason it fails, and its
        graph's shape, computed by the server; the verdict's words as Messages, said in each
        reader's language) -> the submission kept: the latest run per seat, runs counted."""
        main, state = self._seated(code, seat)
        if not isinstance(source, str) or len(source) > MAX_CODE:
            raise ClassError(N_("That code is too long to send to the class."))
        if state.challenge is None:
            raise ClassError(N_("No challenge is open."))
        name = f"{main}:runs:{state.challenge}"
        now = self.clock()
        with reachable():
            number = seat_number(self.db, code, seat)
            before = self.db.hget(name, seat)
            last = None if before is None else Submission.from_json(before, number)
            first_pass = last.first_pass if last is not None else None
            if passes and first_pass is None:
                first_pass = now
            run = Submission(number, source, bool(passes), bounded(sentence, MAX_TEXT),
                             str(shape)[:MAX_KEY], error, now,
                             1 + (last.runs if last is not None else 0), first_pass,
                             bounded(reason, MAX_TEXT))
            pipe = self.db.pipeline()
            pipe.hset(name, seat, run.to_json())
            self._touch(pipe, code)
            pipe.execute()
        return run

    def my_run(self, code: str, seat: object) -> Submission | None:
        """This seat's latest run for the open challenge, if it sent one."""
        seat = parse_seat(seat)
        if seat is None:
            return None
        main = class_key(code)
        with reachable():
            number = self.db.hget(main, "challenge")
            if not number or number == "0":
                return None
            text = self.db.hget(f"{main}:runs:{number}", seat)
        return None if text is None else Submission.from_json(text)

    def shown_run(self, code: str) -> Submission | None:
        """The run the teacher shows the class, without its seat; None while none is shown."""
        main = class_key(code)
        with reachable():
            pipe = self.db.pipeline(transaction=False)
            pipe.hget(main, "shown")
            pipe.hget(f"{main}:shown", "run")
            shown, text = pipe.execute()
        if not shown or shown == "0" or text is None:
            return None
        return Submission.from_json(text)
