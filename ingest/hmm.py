"""jieba's HMM for unknown words (``jieba.finalseg.cut``), word for word, about twice as fast.

jieba's Viterbi keeps a dict per character and copies every state's whole path at each step. Here
the four states (Begin, Middle, End, Single) are unrolled into local variables with back-pointers,
over jieba's own probability tables, with the same float operations in the same order and the same
tie-break (the state later in the alphabet wins a tie), so the words are ``finalseg.cut``'s. Tests
compare the two on random text and real corpora.

>>> from jieba import finalseg
>>> hmm_cut("杭研") == list(finalseg.cut("杭研"))
True
>>> hmm_cut("韩冰说a1b2.5%测试")
['韩冰', '说', 'a1b2.5%', '测试']
"""

from __future__ import annotations

from jieba import finalseg

__all__ = ["hmm_cut"]

_MIN = finalseg.MIN_FLOAT
_START = finalseg.start_P
_TRANS = finalseg.trans_P
_EMIT = finalseg.emit_P


def hmm_cut(text: str) -> list[str]:
    """The words of ``text`` as ``list(jieba.finalseg.cut(text))``."""
    out: list[str] = []
    han, skip = finalseg.re_han, finalseg.re_skip
    split_words = finalseg.Force_Split_Words
    for block in han.split(text):
        if han.match(block):
            for word in _words(block, _states(block)):
                if word in split_words:
                    out.extend(word)
                else:
                    out.append(word)
        else:
            out.extend(x for x in skip.split(block) if x)
    return out


def _states(obs: str) -> str:
    """The most probable B/M/E/S label of each character (jieba's ``finalseg.viterbi``)."""
    e_b, e_m, e_e, e_s = _EMIT["B"].get, _EMIT["M"].get, _EMIT["E"].get, _EMIT["S"].get
    t_eb, t_sb = _TRANS["E"]["B"], _TRANS["S"]["B"]
    t_mm, t_bm = _TRANS["M"]["M"], _TRANS["B"]["M"]
    t_ss, t_es = _TRANS["S"]["S"], _TRANS["E"]["S"]
    t_be, t_me = _TRANS["B"]["E"], _TRANS["M"]["E"]
    first = obs[0]
    v_b = _START["B"] + e_b(first, _MIN)
    v_m = _START["M"] + e_m(first, _MIN)
    v_e = _START["E"] + e_e(first, _MIN)
    v_s = _START["S"] + e_s(first, _MIN)
    # back[t] holds, for states B, M, S, E at t, the state each came from at t - 1
    back: list[tuple[str, str, str, str]] = []
    for ch in obs[1:]:
        em = e_b(ch, _MIN)
        x, y = v_e + t_eb + em, v_s + t_sb + em
        n_b, p_b = (y, "S") if y >= x else (x, "E")
        em = e_m(ch, _MIN)
        x, y = v_m + t_mm + em, v_b + t_bm + em
        n_m, p_m = (x, "M") if x >= y else (y, "B")
        em = e_s(ch, _MIN)
        x, y = v_s + t_ss + em, v_e + t_es + em
        n_s, p_s = (x, "S") if x >= y else (y, "E")
        em = e_e(ch, _MIN)
        x, y = v_b + t_be + em, v_m + t_me + em
        n_e, p_e = (y, "M") if y >= x else (x, "B")
        back.append((p_b, p_m, p_s, p_e))
        v_b, v_m, v_s, v_e = n_b, n_m, n_s, n_e
    state = "S" if v_s >= v_e else "E"
    labels = [state]
    for step in reversed(back):
        state = step["BMSE".index(state)]
        labels.append(state)
    return "".join(reversed(labels))


def _words(block: str, labels: str) -> list[str]:
    """Cut ``block`` at its labels, exactly as jieba's ``finalseg.__cut``."""
    words: list[str] = []
    begin = nxt = 0
    for i, label in enumerate(labels):
        if label == "B":
            begin = i
        elif label == "E":
            words.append(block[begin : i + 1])
            nxt = i + 1
        elif label == "S":
            words.append(block[i])
            nxt = i + 1
    if nxt < len(block):
        words.append(block[nxt:])
    return words
