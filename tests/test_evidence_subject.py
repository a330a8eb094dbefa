"""Whose words: a criterion about the agent is not supported by the customer's words alone
(qa.evidence, ``subject``). Plain pytest, no database."""

from __future__ import annotations

import time

import pytest

from qa.evidence import Status, verify_evidence

CALL = (
    "AGENT: Thank you for calling Harper Valley Bank, my name is Ana.\n"
    "CUSTOMER: Hi, I need to update my address.\n"
    "AGENT: Sure, I can help you update your address today.\n"
    "CUSTOMER: Great, thank you so much.\n"
)


def test_a_customers_line_cited_for_an_agent_criterion_is_wrong_subject():
    check = verify_evidence("Hi, I need to update my address.", CALL, "agent")

    assert check.status is Status.WRONG_SUBJECT and not check.verified
    # What was cited is shown (not as evidence): the customer's words.
    [(start, end)] = check.spans
    assert CALL[start:end] == "Hi, I need to update my address"
    # The same quote supports a criterion about the customer, or about anyone.
    assert verify_evidence("Hi, I need to update my address.", CALL, "customer").verified
    assert verify_evidence("Hi, I need to update my address.", CALL).verified


def test_with_its_label_too():
    assert verify_evidence("CUSTOMER: Hi, I need to update my address.", CALL, "agent").status is Status.WRONG_SUBJECT
    assert verify_evidence("AGENT: my name is Ana", CALL, "customer").status is Status.WRONG_SUBJECT


@pytest.mark.parametrize(
    "quote",
    [
        # The seed's own example: the customer's words and the agent's answer, in one fragment...
        "CUSTOMER: Hi, I need to update my address. AGENT: Sure, I can help",
        # ... unlabelled ...
        "update my address sure i can help",
        # ... or as two fragments.
        "I need to update my address ... AGENT: I can help you update your address",
    ],
)
def test_a_quote_spanning_the_customers_words_and_the_agents_answer_verifies(quote):
    assert verify_evidence(quote, CALL, "agent").verified
    assert verify_evidence(quote, CALL, "customer").verified


def test_words_both_said_verify_where_the_subject_said_them():
    transcript = (
        "CUSTOMER: please update my address\n"
        "AGENT: of course\n"
        "CUSTOMER: update my address please\n"
        "AGENT: so you want me to update my address please\n"
    )
    check = verify_evidence("update my address please", transcript, "agent")

    assert check.verified
    [(start, end)] = check.spans
    assert start > transcript.index("AGENT: so")  # the agent's occurrence, not the customer's earlier one
    # A chain of fragments: the first found where the customer said it, the second only in the agent's words.
    assert verify_evidence("please update ... update my address please", transcript, "agent").verified
    assert verify_evidence("please update my ... of course", transcript, "customer").verified


def test_labels_are_read_as_roles_in_both_languages():
    spanish = "AGENTE: Buenas tardes, le atiende Marta.\nCLIENTE: Me cobraron dos veces la factura.\n"
    assert verify_evidence("Me cobraron dos veces", spanish, "agent").status is Status.WRONG_SUBJECT
    assert verify_evidence("Buenas tardes, le atiende Marta", spanish, "agent").verified
    harper_valley = "agent: hello this is harper valley national bank\ncaller: i need to replace my card\n"
    assert verify_evidence("i need to replace my card", harper_valley, "agent").status is Status.WRONG_SUBJECT
    operator = "OPERADOR: gracias por llamar\nUSUARIA: quiero dar de baja la linea\n"
    assert verify_evidence("quiero dar de baja", operator, "customer").verified
    assert verify_evidence("quiero dar de baja", operator, "agent").status is Status.WRONG_SUBJECT


@pytest.mark.parametrize(
    ("agent", "customer"), [("AGENTE", "CLIENTE"), ("AGENT", "CUSTOMER"), ("agent", "caller"), ("OPERADOR", "USUARIA"), ("asesor", "cliente")]
)
def test_the_readmes_labels(agent, customer):
    transcript = f"{agent}: gracias por llamar a telco sur\n{customer}: quiero dar de baja la linea\n"
    assert verify_evidence("quiero dar de baja", transcript, "agent").status is Status.WRONG_SUBJECT
    assert verify_evidence("quiero dar de baja", transcript, "customer").verified
    assert verify_evidence("gracias por llamar", transcript, "agent").verified


def test_speakers_of_no_known_role_are_not_held_against_the_quote():
    # Mono audio without diarization: every turn has the unknown speaker; exported labels may name no role.
    for label in ("UNKNOWN", "DESCONOCIDO"):
        unknown = f"{label}: thank you for calling\n{label}: hi i need to update my address\n"
        assert verify_evidence("i need to update my address", unknown, "agent").verified
    numbered = "Speaker 1: thank you for calling\nSpeaker 2: hi i need to update my address\n"
    assert verify_evidence("i need to update my address", numbered, "agent").verified
    # A turn of unknown role among known ones could be anyone's: it counts for either subject.
    mixed = "AGENT: thank you for calling\nSpeaker 2: hi i need to update my address\nCUSTOMER: yes and my phone\n"
    assert verify_evidence("i need to update my address", mixed, "agent").verified
    assert verify_evidence("yes and my phone", mixed, "agent").status is Status.WRONG_SUBJECT


def test_wrong_subject_comes_after_every_other_failure():
    # Not found, wrong speaker, too short: those statuses stand, whatever the subject.
    assert verify_evidence("I need to change my phone number", CALL, "agent").status in {Status.PARAPHRASE, Status.NOT_FOUND}
    assert verify_evidence("AGENT: I need to update my address", CALL, "agent").status is Status.WRONG_SPEAKER
    assert verify_evidence("my address", CALL, "agent").status is Status.TOO_SHORT


def test_an_unknown_subject_is_refused():
    with pytest.raises(ValueError, match="subject must be one of agent, customer, any, not 'supervisor'"):
        verify_evidence("thank you for calling", CALL, "supervisor")


def test_many_customer_turns_repeating_the_quote_cost_about_a_pass():
    """The search for the subject's occurrence skips the other side's turns a run at a time."""

    customers = "CUSTOMER: i need to update my address\nAGENT: mm\n" * 5000
    transcript = customers + "AGENT: i need to update my address\n"
    started = time.process_time()
    check = verify_evidence("i need to update my address", transcript, "agent")
    assert check.verified and check.spans[0][0] > transcript.rindex("AGENT: i need")
    assert verify_evidence("i need to update ... update my address", customers, "agent").status is Status.WRONG_SUBJECT
    assert time.process_time() - started < 5.0
